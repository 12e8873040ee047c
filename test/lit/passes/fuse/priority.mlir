// RUN: mlc-opt %s --fuse="explain=true max-fusion-size=2" | filecheck %s --check-prefix=SCORE
// RUN: mlc-opt %s --fuse="explain=true max-fusion-size=2 priority=model" | filecheck %s --check-prefix=MODEL
// RUN: not mlc-opt %s --fuse="priority=bytes" 2>&1 | filecheck %s --check-prefix=BAD

// Two pairs compete for buf1 (at most two nodes a kernel). Inductor's score ties them (each
// shares 4 MiB, both pointwise) and takes the first; but buf0 is returned, so fusing it with
// buf1 saves a launch and buf1's load of it (2.75 us on the H100's datasheet), while buf1 is
// read only by buf2: fusing those two saves its store and its load too (4.00 us). The cost
// model takes the second. (The saving logged for a pair merged later is the one predicted at
// the round's start, for the pair's first units: as its score.)
// SCORE:       buffer.fused {
// SCORE-NEXT:    buffer.computed "buf0"
// SCORE:         buffer.computed "buf1"
// SCORE:       }
// SCORE:       buffer.computed "buf2"
// SCORE:       fusion = ["candidate buf0 + buf1: score (1, 4194304, -1), saves 2.75 us", "fused buf0 + buf1", "candidate buf0+buf1 + buf2: score (1, 4194304, -1), saves 4.00 us", "refused buf0+buf1 + buf2: [too large] 2 + 1 nodes > max_fusion_size 2", "refusals: too large: 1"]

// MODEL:       buffer.computed "buf0"
// MODEL:       buffer.fused {
// MODEL-NEXT:    buffer.computed "buf1"
// MODEL:         buffer.computed "buf2"
// MODEL:       fusion = ["candidate buf1 + buf2: score (1, 4194304, -1), saves 4.00 us", "fused buf1 + buf2", "candidate buf0 + buf1+buf2: score (1, 4194304, -1), saves 2.75 us", "refused buf0 + buf1+buf2: [too large] 1 + 2 nodes > max_fusion_size 2", "refusals: too large: 1"]

// BAD: fuse: priority must be score or model, not 'bytes'
buffer.graph @returned_intermediate {
  buffer.input "x" #buffer.layout<[1048576], [1], f32>
  buffer.computed "buf0" #buffer.layout<[1048576], [1], f32> ranges [1048576] origins ["neg"] {
    %0 = buffer.load @x[i0] : f32
    %1 = arith.negf %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[1048576], [1], f32> ranges [1048576] origins ["exp"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf1[i0], %1 : f32
  }
  buffer.computed "buf2" #buffer.layout<[1048576], [1], f32> ranges [1048576] origins ["sin"] {
    %0 = buffer.load @buf1[i0] : f32
    %1 = math.sin %0 : f32
    buffer.store @buf2[i0], %1 : f32
  }
  buffer.output @buf0, @buf2
}
