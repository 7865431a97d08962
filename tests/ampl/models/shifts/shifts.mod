# Shift scheduling: choose how many people work each shift so that every period is staffed;
# COVER[p] is the indexed set of shifts on duty in period p.
set SHIFTS;
set PERIODS;
set COVER {PERIODS} within SHIFTS;

param need {PERIODS} >= 0, integer;
param wage {SHIFTS} > 0;
param maxstaff >= 0, integer;

var Work {SHIFTS} >= 0, <= maxstaff, integer;

minimize Payroll: sum {s in SHIFTS} wage[s] * Work[s];

subject to Staffed {p in PERIODS}: sum {s in COVER[p]} Work[s] >= need[p];
