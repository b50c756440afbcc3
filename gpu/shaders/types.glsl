// The element type of one shader variant, chosen by a define from the build (DT_F32, DT_F16,
// DT_I32). T is the storage type, ACC the type arithmetic runs in.
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
#else
#error "define one of DT_F32, DT_F16, DT_I32"
#endif

// Grid-stride loops: dispatches cap the group count at 65535 in x and walk the rest.
#define GRID_STRIDE (gl_NumWorkGroups.x * gl_WorkGroupSize.x)
