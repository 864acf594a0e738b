"""Disagreements the fuzzer has found whose fix belongs to another part of the tree:
each matched by the pair, the ops of the shrunk program and the message, and named
by where the fix goes. ``known(finding)`` gives the entry a finding matches, if any; a
run reports those apart from new findings. Delete an entry when its fix lands (its
corpus case, ``status: "open"``, then fails as an unexpected pass).
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Known(NamedTuple):
    key: str
    where: str  # the file and function a fix belongs in
    what: str
    pattern: str  # matched against "pair kind ops detail"


KNOWN = [
    Known("vm-named-any-dim-vs-static", "vm/shape_func.py name_any_dims",
          "the cpu VM names every Any dim (anydimN) and re-infers the kernel's types; a "
          "relation that unifies dims outside broadcasting then refuses a named dim next "
          "to a static one: einsum(ii->i) of Tensor[(?, 3)] fails to compile for the cpu "
          "VM ('subscript i of operand 0 has size 3, but anydim0 elsewhere')",
          r"^vm/cpu crash .*(anydim\d+ elsewhere|size anydim\d+, but"
          r"|shapes do not broadcast.*anydim)"),
    Known("interp-skips-runtime-relation", "runtime/interpreter.py (or the op's relation)",
          "with Any dims the interpreter runs an op's reference on concrete shapes its type "
          "relation refuses (conv3d_transpose whose padding crops an output axis to 0: the "
          "reference returns an empty tensor); the VM re-runs the relation on the concrete "
          "shapes and raises ShapeError. One of the two should give way: check relations "
          "at run time in the interpreter, or let the relation accept the empty output",
          r"^vm/\w+ crash .*ShapeError: kernel \w+: \S+ cannot take input shapes"),
    Known("relation-passes-symbolic-dim", "op/nn/depth_space.py _depth_space_rel, "
          "op/nn/dense_pack.py _dense_pack_rel",
          "these relations pass a non-static dim through unchanged where the output is a "
          "multiple or a quotient of it (``dims['H'] // b if _static(...) else "
          "dims['H']``, ``weight.shape[0] * n if _static(...) else weight.shape[0]``): "
          "harmless for Any, wrong for the cpu VM's named dims, which then fail at run "
          "time ('dim anydim0 is 4 in one place and 2 in another'); a non-static dim "
          "should become Any() unless the factor is 1",
          r"^vm/cpu crash .*(space_to_depth|depth_to_space|contrib_dense_pack).*is \d+ in "
          r"one place and \d+ in another"),
    Known("vm-dynamic-broadcast-of-one", "vm/shape_func.py _check_broadcast",
          "the cpu VM's kernels assume Any dims meeting in a broadcast are equal: an Any "
          "dim that is 1 at run time against a larger one is refused with ShapeError "
          "(the interpreter, numpy VM and Relay's types accept it)",
          r"^vm/cpu crash .*ShapeError: .*broadcasts dynamic dim .*equal dims"),
    Known("scatter-nd-no-update-axes", "te/computes/scatter.py (scatter_nd) / tir/loops.py "
          "use_block",
          "scatter_nd whose indices are (M,) (one update, no update axes) with mode add/mul/"
          "min/max builds a Reduce over zero axes; lowering it calls max() of an empty "
          "sequence (ValueError) on the cpu target",
          r"^\w+/cpu crash .*scatter_nd.*max\(\) arg is an empty sequence"),
    Known("rnn-relu-drops-nan", "codegen/routines_recurrent.py rl_rnn_block",
          "nn.rnn_sequence(activation=\"relu\") on the cpu target applies relu as "
          "``acc > 0 ? acc : 0``, which turns NaN into 0 (np.maximum keeps NaN); "
          "``rl_max_$S(acc, 0)`` from HEADER has numpy's rule (also seen: -inf where "
          "the reference gives NaN, seed 1710)",
          r"^\w+/cpu mismatch .*nn\.rnn_sequence\(activation=relu.*want \[nan"),
    Known("grid-sample-border-inf", "te/computes/image.py _TE_OPS['clip']",
          "image.grid_sample with border padding clamps coordinates with "
          "``select(x > hi, x * 0.0 + hi, x)``: an infinite grid coordinate gives NaN "
          "(inf * 0) instead of the border (np.clip in the reference); "
          "``E.const(hi, x.dtype)`` is the fix",
          r"^\w+/cpu mismatch .*image\.grid_sample\([^)]*padding_mode=border"),
    Known("resize-int-extrapolation", "te/computes/image.py resize",
          "image.resize*d of integer data with tf_crop_and_resize and a fractional "
          "extrapolation_value: ``E.const(extrapolation_value, int dtype)`` raises "
          "LoweringError on the cpu target; the reference rounds it half to even "
          "(np.round) like every other integer result",
          r"^\w+/cpu crash .*image\.resize\dd.*cannot make an u?int\d+ constant"),
    Known("numpy-kernel-one-tuple", "runtime/numpy_kernels.py (the _single_ref fast path)",
          "a primitive function that is one call of an op returning a 1-tuple (split with "
          "indices_or_sections=1) runs on the numpy target through the single-reference "
          "path, which stores np.asarray(tuple) -- a leading axis of 1 -- and fails: "
          "'output 0 computed shape (1, 4, 5, 1), but its type says (4, 5, 1)'",
          r"^\w+/numpy crash .*KernelError: kernel \w+: output 0 computed shape \(1, "),
    Known("matmul-zero-units", "tir/matmul.py tile_shape (most_rows)",
          "a dense/matmul whose output has 0 columns (nn.dense with a (0, k) weight) "
          "divides by the vector count nv = 0 while choosing the register tile: "
          "ZeroDivisionError on the cpu target instead of an empty result",
          r"^\w+/cpu crash .*(nn\.dense|nn\.matmul|nn\.batch_matmul|contrib_dense_pack).*"
          r"ZeroDivisionError"),
    Known("dyn-resize-layout", "op/dynamic_params.py _resize_rel",
          "dyn.image.resize{1,2,3}d's relation marks the trailing axes dynamic whatever "
          "the layout: with NWC/NHWC/NDHWC it types the channel axis ? and the spatial "
          "ones static, while the reference honours the layout",
          r"^relation/reference type .*dyn\.image\.resize\dd: "),
]


def known(finding: dict) -> Known | None:
    text = " ".join([finding.get("pair", ""), finding.get("kind", ""),
                     ",".join(finding.get("ops", [])), finding.get("detail", "")])
    for k in KNOWN:
        if re.search(k.pattern, text, re.S):
            return k
    return None
