# Assignment: each worker takes exactly one job and each job one worker, at least total time.
set WORKERS;
set JOBS;
param time {WORKERS, JOBS} >= 0;

check: card(WORKERS) = card(JOBS);

var Assign {WORKERS, JOBS} binary;

minimize Total_Time: sum {w in WORKERS, j in JOBS} time[w,j] * Assign[w,j];

subject to One_Job {w in WORKERS}: sum {j in JOBS} Assign[w,j] = 1;
subject to One_Worker {j in JOBS}: sum {w in WORKERS} Assign[w,j] = 1;
