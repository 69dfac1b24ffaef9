# accord-sim sensitivity: sens-s-e5-l-excl, scan_period=60 against the defaults
set terminal pngcairo size 900,600 noenhanced
set output 'sens-s-e5-l-excl--scan_period=60.vs.png'
set title "sens-s-e5-l-excl: defaults (solid) against scan_period=60 (dashed)\nmean turnaround, 95% CI"
set xlabel 'load'; set ylabel 'mean turnaround (s)'; set key outside right; set grid
plot 'sens-s-e5-l-excl--scan_period=60.vs.dat' index 0 using 1:2:3 with yerrorlines lc 1 dt 1 title 'CA', 'sens-s-e5-l-excl--scan_period=60.vs.dat' index 0 using 1:4:5 with yerrorlines lc 1 dt 2 title 'CA, alt.', \
     'sens-s-e5-l-excl--scan_period=60.vs.dat' index 1 using 1:2:3 with yerrorlines lc 2 dt 1 title 'FCM', 'sens-s-e5-l-excl--scan_period=60.vs.dat' index 1 using 1:4:5 with yerrorlines lc 2 dt 2 title 'FCM, alt.'
