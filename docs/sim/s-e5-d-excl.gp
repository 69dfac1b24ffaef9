# accord-sim: S-E5 Wave, d-excl
set terminal pngcairo size 900,600 noenhanced
set output 's-e5-d-excl.png'
set title "S-E5 Wave, d-excl\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'load'
set ylabel 'mean_resp'
set key outside right
set grid
plot 's-e5-d-excl.dat' index 0 using 1:2:3 with yerrorlines title 'FCM', \
     's-e5-d-excl.dat' index 1 using 1:2:3 with yerrorlines title 'CA'
