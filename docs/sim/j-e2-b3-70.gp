# accord-sim: J-E2 B3-70 average TAT over (BSBW, LSLT)
set terminal pngcairo size 900,600 noenhanced
set output 'j-e2-b3-70.png'
set title "J-E2 B3-70 average TAT over (BSBW, LSLT)\nmean_resp; 3 replications, 95% CI; saturated points left out"
set xlabel 'bsbw'
set ylabel 'mean_resp'
set key outside right
set grid
plot 'j-e2-b3-70.dat' index 0 using 1:2:3 with yerrorlines title '0.4', \
     'j-e2-b3-70.dat' index 1 using 1:2:3 with yerrorlines title '0.6', \
     'j-e2-b3-70.dat' index 2 using 1:2:3 with yerrorlines title '0.8', \
     'j-e2-b3-70.dat' index 3 using 1:2:3 with yerrorlines title '1.0', \
     'j-e2-b3-70.dat' index 4 using 1:2:3 with yerrorlines title '1.2'
