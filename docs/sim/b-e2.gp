# accord-sim: B-E2 LP variants, rho_net 0.8
set terminal pngcairo size 900,600 noenhanced
set output 'b-e2.png'
set title "B-E2 LP variants, rho_net 0.8\nmean_resp; 5 replications, 95% CI; saturated points left out"
set xlabel 'composition'
set ylabel 'mean_resp'
set key outside right
set grid
set xtics ('25,25,25,25' 0, '50,0,0,50' 1, '50,25,25,0' 2, '50,50,0,0' 3, '80,0,0,20' 4, '90,0,0,10' 5, '100,0,0,0' 6, '0,0,0,100' 7, '0,50,50,0' 8) rotate by -30
set xrange [-0.5:8.5]
plot 'b-e2.dat' index 0 using 1:2:3 with yerrorlines title 'LP-LF', \
     'b-e2.dat' index 1 using 1:2:3 with yerrorlines title 'LP-GF', \
     'b-e2.dat' index 2 using 1:2:3 with yerrorlines title 'LP-RD'
