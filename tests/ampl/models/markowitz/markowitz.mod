# Markowitz: the least-variance portfolio that earns a target return; the variance is written
# as a double sum of products (a QP once the covariance is found PSD).
set ASSETS;
param mu {ASSETS};
param cov {ASSETS cross ASSETS};
param target;
param cap {ASSETS} > 0, <= 1, default 1;

var Weight {a in ASSETS} >= 0, <= cap[a];

minimize Variance: sum {i in ASSETS, j in ASSETS} cov[i,j] * Weight[i] * Weight[j];

subject to Budget: sum {a in ASSETS} Weight[a] = 1;
subject to Return: sum {a in ASSETS} mu[a] * Weight[a] >= target;
