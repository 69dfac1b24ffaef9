# accord-sim: S-E3 reference: no co-allocation
set terminal pngcairo size 900,600 noenhanced
set output 's-e3-ref.png'
set title "S-E3 reference: no co-allocation\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'load'
set ylabel 'mean_resp'
set key outside right
set grid
plot 's-e3-ref.dat' index 0 using 1:2:3 with yerrorlines title '0.25'
