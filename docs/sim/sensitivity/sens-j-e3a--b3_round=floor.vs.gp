# accord-sim sensitivity: sens-j-e3a, b3_round=floor against the defaults
set terminal pngcairo size 900,600 noenhanced
set output 'sens-j-e3a--b3_round=floor.vs.png'
set title "sens-j-e3a: defaults (solid) against b3_round=floor (dashed)\nmean turnaround, 95% CI"
set xlabel 'BSBW'; set ylabel 'mean turnaround (s)'; set key outside right; set grid
plot 'sens-j-e3a--b3_round=floor.vs.dat' index 0 using 1:2:3 with yerrorlines lc 1 dt 1 title 'B3-70', 'sens-j-e3a--b3_round=floor.vs.dat' index 0 using 1:4:5 with yerrorlines lc 1 dt 2 title 'B3-70, alt.', \
     'sens-j-e3a--b3_round=floor.vs.dat' index 1 using 1:2:3 with yerrorlines lc 2 dt 1 title 'B3-90', 'sens-j-e3a--b3_round=floor.vs.dat' index 1 using 1:4:5 with yerrorlines lc 2 dt 2 title 'B3-90, alt.'
