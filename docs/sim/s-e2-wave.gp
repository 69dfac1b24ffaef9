# accord-sim: S-E2 W-wave (CCR 1.0), D-excl
set terminal pngcairo size 900,600 noenhanced
set output 's-e2-wave.png'
set title "S-E2 W-wave (CCR 1.0), D-excl\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'load'
set ylabel 'mean_resp'
set key outside right
set grid
plot 's-e2-wave.dat' index 0 using 1:2:3 with yerrorlines title 'NOCO', \
     's-e2-wave.dat' index 1 using 1:2:3 with yerrorlines title 'FCM', \
     's-e2-wave.dat' index 2 using 1:2:3 with yerrorlines title 'FCM-2'
