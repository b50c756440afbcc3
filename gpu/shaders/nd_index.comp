#version 450
// GatherNd/ScatterNd indices to row ids: ids[j] = the row-major position of the coordinate tuple
// indices[j, 0..k) in dims[0..k), or -1 when any coordinate is outside its dimension. The
// kernels then run gather.comp (params viewed as [rows, inner]; -1 gives zeros) or segment.comp
// (-1 drops the update). Indices are int32, or int64 (two words) with specialization constant 0.
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint IDX_I64 = 0;

layout(binding = 0) readonly buffer I { int indices[]; };
layout(binding = 1) writeonly buffer O { int ids[]; };

// Mirrored by NdIndexPush in gpu/vulkan/kernels/push.h.
layout(push_constant) uniform Push {
  uint rows;     // number of index tuples
  uint k;        // coordinates per tuple (<= 8)
  uint dims[8];  // the indexed dimensions
} p;

void main() {
  for (uint j = gl_GlobalInvocationID.x; j < p.rows; j += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    int id = 0;
    bool ok = true;
    for (uint d = 0; d < p.k; ++d) {
      uint w = j * p.k + d;
      int c = IDX_I64 != 0 ? indices[2 * w] : indices[w];
      if (IDX_I64 != 0 && indices[2 * w + 1] != 0) ok = false;
      if (c < 0 || uint(c) >= p.dims[d]) ok = false;
      id = id * int(p.dims[d]) + c;
    }
    ids[j] = ok ? id : -1;
  }
}
