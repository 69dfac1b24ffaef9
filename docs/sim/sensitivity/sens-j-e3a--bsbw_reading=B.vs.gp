# accord-sim sensitivity: sens-j-e3a, bsbw_reading=B against the defaults
set terminal pngcairo size 900,600 noenhanced
set output 'sens-j-e3a--bsbw_reading=B.vs.png'
set title "sens-j-e3a: defaults (solid) against bsbw_reading=B (dashed)\nmean turnaround, 95% CI"
set xlabel 'BSBW'; set ylabel 'mean turnaround (s)'; set key outside right; set grid
plot 'sens-j-e3a--bsbw_reading=B.vs.dat' index 0 using 1:2:3 with yerrorlines lc 1 dt 1 title 'A1', 'sens-j-e3a--bsbw_reading=B.vs.dat' index 0 using 1:4:5 with yerrorlines lc 1 dt 2 title 'A1, alt.', \
     'sens-j-e3a--bsbw_reading=B.vs.dat' index 1 using 1:2:3 with yerrorlines lc 2 dt 1 title 'B1', 'sens-j-e3a--bsbw_reading=B.vs.dat' index 1 using 1:4:5 with yerrorlines lc 2 dt 2 title 'B1, alt.', \
     'sens-j-e3a--bsbw_reading=B.vs.dat' index 2 using 1:2:3 with yerrorlines lc 3 dt 1 title 'B2', 'sens-j-e3a--bsbw_reading=B.vs.dat' index 2 using 1:4:5 with yerrorlines lc 3 dt 2 title 'B2, alt.', \
     'sens-j-e3a--bsbw_reading=B.vs.dat' index 3 using 1:2:3 with yerrorlines lc 4 dt 1 title 'B3-70', 'sens-j-e3a--bsbw_reading=B.vs.dat' index 3 using 1:4:5 with yerrorlines lc 4 dt 2 title 'B3-70, alt.', \
     'sens-j-e3a--bsbw_reading=B.vs.dat' index 4 using 1:2:3 with yerrorlines lc 5 dt 1 title 'B3-90', 'sens-j-e3a--bsbw_reading=B.vs.dat' index 4 using 1:4:5 with yerrorlines lc 5 dt 2 title 'B3-90, alt.', \
     'sens-j-e3a--bsbw_reading=B.vs.dat' index 5 using 1:2:3 with yerrorlines lc 6 dt 1 title 'B4', 'sens-j-e3a--bsbw_reading=B.vs.dat' index 5 using 1:4:5 with yerrorlines lc 6 dt 2 title 'B4, alt.'
