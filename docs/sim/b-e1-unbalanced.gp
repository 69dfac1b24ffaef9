# accord-sim: B-E1 LS variants, (80,0,0,20), rho_net 0.8
set terminal pngcairo size 900,600 noenhanced
set output 'b-e1-unbalanced.png'
set title "B-E1 LS variants, (80,0,0,20), rho_net 0.8\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'routing'
set ylabel 'mean_resp'
set key outside right
set grid
set xtics ('1,1,1,1' 0, '40,20,20,20' 1) rotate by -30
set xrange [-0.5:1.5]
plot 'b-e1-unbalanced.dat' index 0 using 1:2:3 with yerrorlines title 'LS-OR', \
     'b-e1-unbalanced.dat' index 1 using 1:2:3 with yerrorlines title 'LS-RD', \
     'b-e1-unbalanced.dat' index 2 using 1:2:3 with yerrorlines title 'LS-RO', \
     'b-e1-unbalanced.dat' index 3 using 1:2:3 with yerrorlines title 'LS-DO'
