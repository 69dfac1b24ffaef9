# accord-sim: J-E0 average TAT vs BSBW, LSLT 100%
set terminal pngcairo size 900,600 noenhanced
set output 'j-e0.png'
set title "J-E0 average TAT vs BSBW, LSLT 100%\nmean_resp; 3 replications, 95% CI; saturated points left out"
set xlabel 'bsbw'
set ylabel 'mean_resp'
set key outside right
set grid
plot 'j-e0.dat' index 0 using 1:2:3 with yerrorlines title 'INITIAL', \
     'j-e0.dat' index 1 using 1:2:3 with yerrorlines title 'A1', \
     'j-e0.dat' index 2 using 1:2:3 with yerrorlines title 'B1'
