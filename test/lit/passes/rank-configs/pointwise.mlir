// RUN: mlc-opt %s -p 'convert-to-triton,rank-configs{tune=model explain=true}' | filecheck %s --check-prefix=MODEL
// RUN: mlc-opt %s -p 'convert-to-triton,rank-configs{tune=top-k k=2}' | filecheck %s --check-prefix=TOPK
// RUN: mlc-opt %s -p 'convert-to-triton,rank-configs' | filecheck %s --check-prefix=ALL
// RUN: mlc-opt %s -p 'convert-to-triton,rank-configs{tune=model}' | mlc-translate --emit-python | filecheck %s --check-prefix=PY
// RUN: not mlc-opt %s -p 'convert-to-triton,rank-configs{tune=fastest}' 2>&1 | filecheck %s --check-prefix=BAD

// exp over 16,384 elements: the heuristics offer XBLOCK 256 first, then 128. The cost model
// predicts 128 faster: 128 programs keep more of the GPU's SMs pulling from DRAM than 64 do.
// MODEL:      triton.kernel @triton_poi_fused_exp_0 {{.*}} configs [#triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
// MODEL:      } attributes {predicted = ["XBLOCK=128 warps=4 stages=1: 1.54 us", "XBLOCK=256 warps=4 stages=1: 1.58 us"]}
// TOPK:       configs [#triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>] {
// ALL:        configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
// ALL-NOT:    predicted
// PY:         triton_poi_fused_exp_0_configs = (dict(XBLOCK=128, num_warps=4, num_stages=1),)
// BAD:        rank-configs: tune must be one of all, top-k, model, not 'fastest'
buffer.graph @small {
  buffer.input "x" #buffer.layout<[16384], [1], f32>
  buffer.computed "buf0" #buffer.layout<[16384], [1], f32> ranges [16384] origins ["exp"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}
