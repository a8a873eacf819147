import resource, time, statistics, numpy as np
import proto_structref as A
from bench_fast import wA_fast, rows, n, W
from bench import loop_np_write
def run(f, mk):
    ts, fl = [], []
    for _ in range(9):
        a = mk(); r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t = time.perf_counter(); f(*a); ts.append((time.perf_counter()-t)/n*1e9)
        fl.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0)
    return statistics.median(ts), statistics.median(fl)
print("A dynamic      ns/step %.1f  minor faults/run %d" % run(wA_fast, lambda: (A.TAState(W, 0, True), rows)))
print("A prealloc     ns/step %.1f  minor faults/run %d" % run(wA_fast, lambda: (A.TAState(W, n, False), rows)))
print("numpy fresh    ns/step %.1f  minor faults/run %d" % run(loop_np_write, lambda: (np.empty((n, W), np.float32), rows)))
