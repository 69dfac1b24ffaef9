# accord-sim: J-E3b average TAT vs LSLT, BSBW 300
set terminal pngcairo size 900,600 noenhanced
set output 'j-e3b-300.png'
set title "J-E3b average TAT vs LSLT, BSBW 300\nmean_resp; 3 replications, 95% CI; saturated points left out"
set xlabel 'lslt'
set ylabel 'mean_resp'
set key outside right
set grid
plot 'j-e3b-300.dat' index 0 using 1:2:3 with yerrorlines title 'A1', \
     'j-e3b-300.dat' index 1 using 1:2:3 with yerrorlines title 'B1', \
     'j-e3b-300.dat' index 2 using 1:2:3 with yerrorlines title 'B2', \
     'j-e3b-300.dat' index 3 using 1:2:3 with yerrorlines title 'B3-70', \
     'j-e3b-300.dat' index 4 using 1:2:3 with yerrorlines title 'B3-90', \
     'j-e3b-300.dat' index 5 using 1:2:3 with yerrorlines title 'B4'
