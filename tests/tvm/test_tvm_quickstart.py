"""TVM's Relay quick-start tutorial ("Quick Start Tutorial for Compiling Deep Learning
Models"), written Relay-era style for target ``llvm`` and device ``cpu``, runs with only
``tvm`` replaced by ``relayir.tvm`` in the imports: a ResNet-18 workload from
``relay.testing``, ``relay.build`` at opt level 3, ``GraphModule(lib["default"](dev))``,
``get_output(0, tvm.nd.empty(...))``, ``export_library`` / ``tvm.runtime.load_module``
and ``module.run(data=...)``. The result is checked against relayir's reference
kernels (target ``numpy``), so the flow computes the right thing, not just anything."""

import numpy as np

import relayir.tvm as tvm
import relayir.tvm.testing  # noqa: F401  (the tutorial imports tvm.testing)
from relayir.tvm import relay
from relayir.tvm.contrib import graph_executor, utils
from relayir.tvm.relay import testing  # noqa: F401  (the tutorial imports it)

BATCH_SIZE = 1
NUM_CLASS = 1000
IMAGE_SHAPE = (3, 224, 224)
DATA_SHAPE = (BATCH_SIZE,) + IMAGE_SHAPE
OUT_SHAPE = (BATCH_SIZE, NUM_CLASS)


def test_relay_quick_start(needs_cc):
    mod, params = relay.testing.resnet.get_workload(
        num_layers=18, batch_size=BATCH_SIZE, image_shape=IMAGE_SHAPE
    )
    text = mod.astext(show_meta_data=False)
    assert text.startswith('#[version = "0.0.5"]') and "nn.conv2d" in text

    opt_level = 3
    target = tvm.target.Target("llvm")
    with tvm.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, target, params=params)

    dev = tvm.cpu()
    data = np.random.uniform(-1, 1, size=DATA_SHAPE).astype("float32")
    module = graph_executor.GraphModule(lib["default"](dev))
    module.set_input("data", data)
    module.run()
    out = module.get_output(0, tvm.nd.empty(OUT_SHAPE)).numpy()
    assert out.shape == OUT_SHAPE

    temp = utils.tempdir()
    path_lib = temp.relpath("deploy_lib.tar")
    lib.export_library(path_lib)
    assert temp.listdir() == ["deploy_lib.tar"]
    loaded_lib = tvm.runtime.load_module(path_lib)
    input_data = tvm.nd.array(data)
    module = graph_executor.GraphModule(loaded_lib["default"](dev))
    module.run(data=input_data)
    out_deploy = module.get_output(0).numpy()
    tvm.testing.assert_allclose(out_deploy, out, atol=1e-5)

    # the reference kernels on the same model and input
    with tvm.transform.PassContext(opt_level=opt_level):
        ref_lib = relay.build(mod, "numpy", params=params)
    ref = graph_executor.GraphModule(ref_lib["default"](dev))
    ref.run(data=data)
    tvm.testing.assert_allclose(out, ref.get_output(0).numpy(), rtol=1e-4, atol=1e-4)
