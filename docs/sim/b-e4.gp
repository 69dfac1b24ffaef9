# accord-sim: B-E4 DAS-s-128 (stand-in), L = 24, e = 1.25
set terminal pngcairo size 900,600 noenhanced
set output 'b-e4.png'
set title "B-E4 DAS-s-128 (stand-in), L = 24, e = 1.25\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'util_gross'
set ylabel 'mean_resp'
set key outside right
set grid
plot 'b-e4.dat' index 0 using 1:2:3 with yerrorlines title 'GS', \
     'b-e4.dat' index 1 using 1:2:3 with yerrorlines title 'LS-DO', \
     'b-e4.dat' index 2 using 1:2:3 with yerrorlines title 'LP-GF'
