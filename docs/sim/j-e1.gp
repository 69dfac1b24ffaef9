# accord-sim: J-E1 Migration Only and Ideal
set terminal pngcairo size 900,600 noenhanced
set output 'j-e1.png'
set title "J-E1 Migration Only and Ideal\nmean_resp; 3 replications, 95% CI; saturated points left out"
set xlabel 'bsbw'
set ylabel 'mean_resp'
set key outside right
set grid
plot 'j-e1.dat' index 0 using 1:2:3 with yerrorlines title 'MIG', \
     'j-e1.dat' index 1 using 1:2:3 with yerrorlines title 'IDEAL'
