# accord-sim sensitivity: sens-j-e3b-300, a1_order=index against the defaults
set terminal pngcairo size 900,600 noenhanced
set output 'sens-j-e3b-300--a1_order=index.vs.png'
set title "sens-j-e3b-300: defaults (solid) against a1_order=index (dashed)\nmean turnaround, 95% CI"
set xlabel 'LSLT'; set ylabel 'mean turnaround (s)'; set key outside right; set grid
plot 'sens-j-e3b-300--a1_order=index.vs.dat' index 0 using 1:2:3 with yerrorlines lc 1 dt 1 title 'A1', 'sens-j-e3b-300--a1_order=index.vs.dat' index 0 using 1:4:5 with yerrorlines lc 1 dt 2 title 'A1, alt.'
