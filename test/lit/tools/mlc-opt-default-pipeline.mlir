// RUN: mlc-opt %s -p default | filecheck %s
// RUN: mlc-opt %s -p 'default,cse' | filecheck %s
// RUN: mlc-opt %s -p cse-aten -p default | filecheck %s
// RUN: not mlc-opt %s -p 'default,no-such-pipeline' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not mlc-opt %s -p 'default{explain=true}' 2>&1 | filecheck %s --check-prefix=OPTIONS
// RUN: mlc-opt --help | filecheck %s --check-prefix=HELP

// `default` is the backend's pipeline registered by name (passes/registry.py): alone, as an
// element of a longer -p list, or after other passes, it takes aten IR to triton IR, the add
// and the sigmoid one kernel. A name that is no pass and no pipeline, or a pipeline given
// options, is an error before any IR is read.
// CHECK:      triton.kernel @triton_poi_fused_add_sigmoid_0 pointwise
// CHECK:        arith.addf
// CHECK:        math.exp
// CHECK:      triton.wrapper @call {
// CHECK:        triton.launch @triton_poi_fused_add_sigmoid_0(@x, @y, @buf0) xnumel 64
// CHECK-NEXT:   triton.free @x, @y
// CHECK-NEXT:   triton.return @buf0
// UNKNOWN:    mlc-opt: error: unknown pass 'no-such-pipeline' (mlc-opt --help lists the passes and pipelines)
// OPTIONS:    mlc-opt: error: pipeline 'default' takes no options (options go to its passes)
// HELP:       pipelines (-p NAME, alone or among the passes of a -p list):
// HELP-NEXT:    default {{.*}}pipeline
// HELP-NEXT:      cse-aten,{{.*}},convert-to-triton,{{.*}}
// HELP:       passes (run in the order given
func.func @add_sigmoid(%x: tensor<4x16xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = aten.add.Tensor %x, %y : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = aten.sigmoid %0 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %1 : tensor<4x16xf32>
}
