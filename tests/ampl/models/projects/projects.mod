# Project selection with prerequisites and exclusive pairs: a project can only be done when
# all its prerequisites (an indexed set) are; conflicting pairs exclude each other; a budget
# limits the spending in each of the two years.
set PROJECTS;
set PREREQ {PROJECTS} within PROJECTS;
set CONFLICTS within PROJECTS cross PROJECTS;
set YEARS = 1..2;
param value {PROJECTS} >= 0;
param spend {PROJECTS, YEARS} >= 0;
param budget {YEARS} >= 0;

check {p in PROJECTS}: p not in PREREQ[p];
check {(p,q) in CONFLICTS}: p <> q;

var Do {PROJECTS} binary;

maximize Value: sum {p in PROJECTS} value[p] * Do[p];

s.t. Needs {p in PROJECTS, q in PREREQ[p]}: Do[p] <= Do[q];
s.t. Exclusive {(p,q) in CONFLICTS}: Do[p] + Do[q] <= 1;
s.t. Budget {y in YEARS}: sum {p in PROJECTS} spend[p,y] * Do[p] <= budget[y];
