# accord-sim: B-E4 GS, L = 16, 24, 32
set terminal pngcairo size 900,600 noenhanced
set output 'b-e4-limits.png'
set title "B-E4 GS, L = 16, 24, 32\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'util_gross'
set ylabel 'mean_resp'
set key outside right
set grid
plot 'b-e4-limits.dat' index 0 using 1:2:3 with yerrorlines title 'limit:16', \
     'b-e4-limits.dat' index 1 using 1:2:3 with yerrorlines title 'limit:24', \
     'b-e4-limits.dat' index 2 using 1:2:3 with yerrorlines title 'limit:32'
