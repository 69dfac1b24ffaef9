# accord-sim: B-E4 SC on 1 x 128
set terminal pngcairo size 900,600 noenhanced
set output 'b-e4-sc.png'
set title "B-E4 SC on 1 x 128\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'util_gross'
set ylabel 'mean_resp'
set key outside right
set grid
plot 'b-e4-sc.dat' index 0 using 1:2:3 with yerrorlines title 'SC'
