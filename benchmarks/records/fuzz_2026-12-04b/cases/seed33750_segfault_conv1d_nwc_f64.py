"""Fuzz seed 33750 (ordinary run at 4d3838a, and already at 3a4ee0e): SIGSEGV on the cpu
target, graph executor and VM, every opt level. Open: run it only in a subprocess.

gdb: fused_nn_conv1d+52 `vmovdqa %xmm1,0x20(%rsi)` with rsi = 0x...dd78 (8 mod 16): an
aligned 16-byte store into the kernel's local `double acc[6]` (an `omp simd` loop over
6 doubles), which is not 16-byte aligned on the stack."""
import numpy as np

import relayir as relay

x = relay.var("x", shape=(1, 6, 2), dtype="float64")
w = relay.var("w", shape=(2, 1, 6), dtype="float64")
body = relay.nn.conv1d(x, w, strides=[2], groups=2, channels=6, data_layout="NWC")
model = relay.runtime.wrap(relay.build(relay.IRModule.from_expr(relay.Function([x, w], body)),
                                       target="cpu"))
rng = np.random.default_rng(0)
print(model.run([rng.standard_normal((1, 6, 2)), rng.standard_normal((2, 1, 6))])[0].shape)
