# accord-sim: BA-E1 ensflow, LS-DO
set terminal pngcairo size 900,600 noenhanced
set output 'ba-e1-ensflow-ls.png'
set title "BA-E1 ensflow, LS-DO\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'util_gross'
set ylabel 'mean_resp'
set key outside right
set grid
plot 'ba-e1-ensflow-ls.dat' index 0 using 1:2:3 with yerrorlines title 'no', \
     'ba-e1-ensflow-ls.dat' index 1 using 1:2:3 with yerrorlines title 'co', \
     'ba-e1-ensflow-ls.dat' index 2 using 1:2:3 with yerrorlines title 'rco', \
     'ba-e1-ensflow-ls.dat' index 3 using 1:2:3 with yerrorlines title 'fco'
