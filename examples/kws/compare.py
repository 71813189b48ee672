#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The fleet check of examples/kws: every target's scores (output_<tag>.bin,
written by app.c) against the reference (ref_0.bin, PyTorch's output) and
against each other, with the project's float32 rule |a - b| <= atol + rtol |b|
(rtol 1e-4, atol 1e-5; between two targets twice that, since each may be that
far from the reference), and the same top class everywhere.

  compare.py DATA_DIR TAG...        exit 0 = all agree, 1 = not
"""
import os
import sys

import numpy as np

RTOL, ATOL = 1e-4, 1e-5


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    d, tags = sys.argv[1], sys.argv[2:]
    ref = np.fromfile(os.path.join(d, "ref_0.bin"), "<f4").astype(np.float64)
    got = {}
    ok = True
    for t in tags:
        path = os.path.join(d, "output_%s.bin" % t)
        if not os.path.exists(path):
            print("compare: %s is missing (did the %s app run?)" % (path, t))
            return 1
        got[t] = np.fromfile(path, "<f4").astype(np.float64)
        if got[t].shape != ref.shape:
            print("compare: %s has %d scores, the reference %d" % (path, got[t].size, ref.size))
            return 1
        err = np.abs(got[t] - ref)
        good = bool(np.all(err <= ATOL + RTOL * np.abs(ref)))
        ok &= good
        print("compare: %-10s vs reference: max abs err %.3g, top class %d %s"
              % (t, err.max(), int(np.argmax(got[t])), "ok" if good else "OUTSIDE rtol/atol"))
    base = tags[0]
    for t in tags[1:]:
        err = np.abs(got[t] - got[base])
        good = bool(np.all(err <= 2 * (ATOL + RTOL * np.abs(got[base]))))
        good &= int(np.argmax(got[t])) == int(np.argmax(got[base]))
        ok &= good
        print("compare: %-10s vs %s: max abs diff %.3g %s" % (t, base, err.max(),
                                                           "ok" if good else "DIFFER"))
    print("compare: %s" % ("the same scores on " + ", ".join(tags) if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
