# accord-sim: Reservation mode vs queues, (25,25,25,25)
set terminal pngcairo size 900,600 noenhanced
set output 'ar-vs-queues.png'
set title "Reservation mode vs queues, (25,25,25,25)\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'load'
set ylabel 'mean_resp'
set key outside right
set grid
plot 'ar-vs-queues.dat' index 0 using 1:2:3 with yerrorlines title 'GS', \
     'ar-vs-queues.dat' index 1 using 1:2:3 with yerrorlines title 'LS-DO', \
     'ar-vs-queues.dat' index 2 using 1:2:3 with yerrorlines title 'AR'
