# accord-sim: S-E3 FCM, CCR application, D-excl
set terminal pngcairo size 900,600 noenhanced
set output 's-e3.png'
set title "S-E3 FCM, CCR application, D-excl\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'load'
set ylabel 'mean_resp'
set key outside right
set grid
plot 's-e3.dat' index 0 using 1:2:3 with yerrorlines title '0.1', \
     's-e3.dat' index 1 using 1:2:3 with yerrorlines title '0.25', \
     's-e3.dat' index 2 using 1:2:3 with yerrorlines title '0.5', \
     's-e3.dat' index 3 using 1:2:3 with yerrorlines title '1', \
     's-e3.dat' index 4 using 1:2:3 with yerrorlines title '2', \
     's-e3.dat' index 5 using 1:2:3 with yerrorlines title '4'
