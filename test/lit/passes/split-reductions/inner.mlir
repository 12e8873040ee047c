// RUN: mlc-opt %s --split-reductions --split-input-file | filecheck %s
// RUN: mlc-opt %s --split-reductions --split-input-file | mlc-opt --split-input-file | filecheck %s
// RUN: mlc-opt %s --split-reductions="enabled=false" --split-input-file | filecheck %s --check-prefix=OFF

// Inner reductions (the reduction index has unit stride): split when the output is smaller
// than 2 * num-sms (264) and rnumel is above 8192, so that each of a block's 256 threads
// handles 32..512 elements. With enabled=false nothing changes.
// OFF-NOT: loops.index
// OFF-NOT: reduce [128]

// A whole-tensor sum of 2^20 elements: 2^20 <= 32 elements x 132 SMs x 2048 threads, so
// 32 elements per thread: 2^20 / (32 * 256) = 128 pieces of 8192, into buf1 (the next free name).
// CHECK-LABEL: buffer.graph @full_sum
// CHECK-NEXT:    buffer.input "x"
// CHECK-NEXT:    buffer.computed "buf1" #buffer.layout<[128], [1], f32> ranges [128] reduce [8192] origins ["sum"] {
// CHECK-NEXT:      %[[X:.*]] = buffer.load @x[r0_0 + 8192*i0] : f32
// CHECK-NEXT:      %[[P:.*]] = buffer.reduce sum %[[X]] : f32 -> f32
// CHECK-NEXT:      buffer.store @buf1[i0], %[[P]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    buffer.computed "buf0" #buffer.layout<[], [], f32> ranges [] reduce [128] origins ["sum"] {
// CHECK-NEXT:      %[[Q:.*]] = buffer.load @buf1[r0_0] : f32
// CHECK-NEXT:      %[[S:.*]] = buffer.reduce sum %[[Q]] : f32 -> f32
// CHECK-NEXT:      buffer.store @buf0[0], %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    buffer.output @buf0
// OFF-LABEL: buffer.graph @full_sum
// OFF-NEXT:    buffer.input "x"
// OFF-NEXT:    buffer.computed "buf0" #buffer.layout<[], [], f32> ranges [] reduce [1048576] origins ["sum"] {
buffer.graph @full_sum {
  buffer.input "x" #buffer.layout<[1048576], [1], f32>
  buffer.computed "buf0" #buffer.layout<[], [], f32> ranges [] reduce [1048576] origins ["sum"] {
    %0 = buffer.load @x[r0_0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[0], %1 : f32
  }
  buffer.output @buf0
}

// -----

// rnumel 8192 is not above the threshold: one reduction.
// CHECK-LABEL: buffer.graph @at_the_rnumel_threshold
// CHECK-NEXT:    buffer.input "x"
// CHECK-NEXT:    buffer.computed "buf0" #buffer.layout<[], [], f32> ranges [] reduce [8192]
// CHECK-NOT:     buffer.computed
buffer.graph @at_the_rnumel_threshold {
  buffer.input "x" #buffer.layout<[8192], [1], f32>
  buffer.computed "buf0" #buffer.layout<[], [], f32> ranges [] reduce [8192] origins ["sum"] {
    %0 = buffer.load @x[r0_0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[0], %1 : f32
  }
  buffer.output @buf0
}

// -----

// 8193 is: 2 pieces of 4097, the tail masked (positions past 8193 reduce the identity, 0),
// and the epilogue (the mean) stays with the final reduction.
// CHECK-LABEL: buffer.graph @past_the_rnumel_threshold
// CHECK:         buffer.computed "buf1" #buffer.layout<[2], [1], f32> ranges [2] reduce [4097] origins ["mean"] {
// CHECK-NEXT:      %[[POS:.*]] = loops.index r0_0 + 4097*i0 : i64
// CHECK-NEXT:      %[[N:.*]] = arith.constant 8193 : i64
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi slt, %[[POS]], %[[N]] : i64
// CHECK-NEXT:      %[[X:.*]] = buffer.load @x[r0_0 + 4097*i0] mask %[[IN]] : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[V:.*]] = arith.select %[[IN]], %[[X]], %[[Z]] : f32
// CHECK-NEXT:      %[[P:.*]] = buffer.reduce sum %[[V]] : f32 -> f32
// CHECK-NEXT:      buffer.store @buf1[i0], %[[P]] : f32
// CHECK:         buffer.computed "buf0" #buffer.layout<[], [], f32> ranges [] reduce [2] origins ["mean"] {
// CHECK-NEXT:      %[[Q:.*]] = buffer.load @buf1[r0_0] : f32
// CHECK-NEXT:      %[[S:.*]] = buffer.reduce sum %[[Q]] : f32 -> f32
// CHECK-NEXT:      %[[C:.*]] = arith.constant 8.193000e+03 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.divf %[[S]], %[[C]] : f32
// CHECK-NEXT:      buffer.store @buf0[0], %[[M]] : f32
buffer.graph @past_the_rnumel_threshold {
  buffer.input "x" #buffer.layout<[8193], [1], f32>
  buffer.computed "buf0" #buffer.layout<[], [], f32> ranges [] reduce [8193] origins ["mean"] {
    %0 = buffer.load @x[r0_0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    %2 = arith.constant 8193.0 : f32
    %3 = arith.divf %1, %2 : f32
    buffer.store @buf0[0], %3 : f32
  }
  buffer.output @buf0
}

// -----

// 263 rows < 2 * 132: split. 263 x 100000 elements lie between 32 and 512 per thread of
// the GPU, so the target is ceil(100000 / (256 * 3 blocks per row)) = 131 elements per
// thread; 125 divides 100000 and is within 30: 4 pieces of 25000, no mask.
// CHECK-LABEL: buffer.graph @few_rows
// CHECK:         buffer.computed "buf1" #buffer.layout<[263, 4], [4, 1], f32> ranges [263, 4] reduce [25000] origins ["sum"] {
// CHECK-NEXT:      %[[X:.*]] = buffer.load @x[r0_0 + 25000*i1 + 100000*i0] : f32
// CHECK-NEXT:      %[[P:.*]] = buffer.reduce sum %[[X]] : f32 -> f32
// CHECK-NEXT:      buffer.store @buf1[i1 + 4*i0], %[[P]] : f32
// CHECK:         buffer.computed "buf0" #buffer.layout<[263], [1], f32> ranges [263] reduce [4] origins ["sum"] {
// CHECK-NEXT:      %{{.*}} = buffer.load @buf1[r0_0 + 4*i0] : f32
buffer.graph @few_rows {
  buffer.input "x" #buffer.layout<[263, 100000], [100000, 1], f32>
  buffer.computed "buf0" #buffer.layout<[263], [1], f32> ranges [263] reduce [100000] origins ["sum"] {
    %0 = buffer.load @x[r0_0 + 100000*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}

// -----

// 264 rows = 2 * 132 fill the GPU: no split.
// CHECK-LABEL: buffer.graph @enough_rows
// CHECK-NEXT:    buffer.input "x"
// CHECK-NEXT:    buffer.computed "buf0" #buffer.layout<[264], [1], f32> ranges [264] reduce [100000]
// CHECK-NOT:     buffer.computed
buffer.graph @enough_rows {
  buffer.input "x" #buffer.layout<[264, 100000], [100000, 1], f32>
  buffer.computed "buf0" #buffer.layout<[264], [1], f32> ranges [264] reduce [100000] origins ["sum"] {
    %0 = buffer.load @x[r0_0 + 100000*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}

// -----

// An f16 amax: the partial results are f32 (Inductor keeps the intermediate in f32), the
// final reduction narrows to f16 before the epilogue; the masked tail reads -inf.
// CHECK-LABEL: buffer.graph @half_amax
// CHECK:         buffer.computed "buf2" #buffer.layout<[2], [1], f32> ranges [2] reduce [5001] origins ["amax"] {
// CHECK:           %[[X:.*]] = buffer.load @x[r0_0 + 5001*i0] mask %{{.*}} : f16
// CHECK-NEXT:      %[[NINF:.*]] = arith.constant 0xfc00 : f16
// CHECK-NEXT:      %[[V:.*]] = arith.select %{{.*}}, %[[X]], %[[NINF]] : f16
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[V]] : f16 to f32
// CHECK-NEXT:      %[[P:.*]] = buffer.reduce max %[[W]] : f32 -> f32
// CHECK-NEXT:      buffer.store @buf2[i0], %[[P]] : f32
// CHECK:         buffer.computed "buf1" #buffer.layout<[], [], f16> ranges [] reduce [2] origins ["amax"] {
// CHECK-NEXT:      %[[Q:.*]] = buffer.load @buf2[r0_0] : f32
// CHECK-NEXT:      %[[M:.*]] = buffer.reduce max %[[Q]] : f32 -> f32
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[M]] : f32 to f16
// CHECK:           %{{.*}} = arith.mulf %[[H]], %{{.*}} : f16
buffer.graph @half_amax {
  buffer.input "x" #buffer.layout<[10001], [1], f16>
  buffer.computed "buf1" #buffer.layout<[], [], f16> ranges [] reduce [10001] origins ["amax"] {
    %0 = buffer.load @x[r0_0] : f16
    %1 = buffer.reduce max %0 : f16 -> f16
    %2 = arith.constant 2.0 : f16
    %3 = arith.mulf %1, %2 : f16
    buffer.store @buf1[0], %3 : f16
  }
  buffer.output @buf1
}

// -----

// argmax is never split (positions would need each piece's offset); a welford is (see
// welford.mlir): 128 partials of 8192 into one.
// CHECK-LABEL: buffer.graph @not_associative
// CHECK-NEXT:    buffer.input "x"
// CHECK-NEXT:    buffer.computed "buf0" {{.*}} reduce [1048576]
// CHECK:         buffer.computed "buf2" {{.*}} ranges [128] reduce [8192] origins ["var"]
// CHECK:         buffer.reduce welford
buffer.graph @not_associative {
  buffer.input "x" #buffer.layout<[1048576], [1], f32>
  buffer.computed "buf0" #buffer.layout<[], [], i64> ranges [] reduce [1048576] origins ["argmax"] {
    %0 = buffer.load @x[r0_0] : f32
    %1 = buffer.reduce argmax %0 : f32 -> i64
    buffer.store @buf0[0], %1 : i64
  }
  buffer.computed "buf1" #buffer.layout<[], [], f32> ranges [] reduce [1048576] origins ["var"] {
    %0 = buffer.load @x[r0_0] : f32
    %1, %2, %3 = buffer.reduce welford %0 : f32 -> (f32, f32, f32)
    buffer.store @buf1[0], %2 : f32
  }
  buffer.output @buf0, @buf1
}
