// The element type of one shader variant, chosen by a define from the build (DT_F32, DT_F16,
// DT_I32, DT_U8). T is the storage type, ACC the type arithmetic runs in.
#if defined(DT_F32)
#define T float
#define ACC float
#define IS_FLOAT 1
#elif defined(DT_F16)
#extension GL_EXT_shader_16bit_storage : require
#define T float16_t
#define ACC float
#define IS_FLOAT 1
#elif defined(DT_I32)
#define T int
#define ACC int
#define IS_FLOAT 0
#elif defined(DT_U8)
// bool (0 or 1) and uint8: stored in bytes, computed in int.
#extension GL_EXT_shader_8bit_storage : require
#define T uint8_t
#define ACC int
#define IS_FLOAT 0
#else
#error "define one of DT_F32, DT_F16, DT_I32, DT_U8"
#endif

// Grid-stride loops: dispatches cap the group count at 65535 in x and walk the rest.
#define GRID_STRIDE (gl_NumWorkGroups.x * gl_WorkGroupSize.x)

// Bool outputs (comparisons, IsNan, ...): one byte per element, 0 or 1.
#if defined(OUT_BOOL)
#extension GL_EXT_shader_8bit_storage : require
#endif
