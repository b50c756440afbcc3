// Operation codes selected by specialization constant 0 of each family's shader. This file is
// included by the GLSL shaders and by the C++ kernels, so it holds nothing but #defines.
#ifndef CAIRN_GPU_SHADERS_OP_CODES_H_
#define CAIRN_GPU_SHADERS_OP_CODES_H_

// unary.comp
#define UOP_NEG 0
#define UOP_ABS 1
#define UOP_SIGN 2
#define UOP_SQUARE 3
#define UOP_RECIPROCAL 4
#define UOP_EXP 5
#define UOP_LOG 6
#define UOP_LOG1P 7
#define UOP_SQRT 8
#define UOP_RSQRT 9
#define UOP_SIN 10
#define UOP_COS 11
#define UOP_TANH 12
#define UOP_SIGMOID 13
#define UOP_ERF 14
#define UOP_RELU 15
#define UOP_RELU6 16
#define UOP_ELU 17
#define UOP_SELU 18
#define UOP_SOFTPLUS 19
#define UOP_GELU 20
#define UOP_GELU_TANH 21
#define UOP_FLOOR 22
#define UOP_CEIL 23
#define UOP_ROUND 24
#define UOP_IDENTITY 25
#define UOP_ZEROS 26
#define UOP_ONES 27
#define UOP_CLIP 28
#define UOP_LNOT 29
#define UOP_ISNAN 30
#define UOP_ISFINITE 31

// binary.comp
#define BOP_ADD 0
#define BOP_SUB 1
#define BOP_MUL 2
#define BOP_DIV 3
#define BOP_FLOORDIV 4
#define BOP_FLOORMOD 5
#define BOP_POW 6
#define BOP_MAX 7
#define BOP_MIN 8
#define BOP_SQDIFF 9
#define BOP_EQ 10
#define BOP_NE 11
#define BOP_LT 12
#define BOP_LE 13
#define BOP_GT 14
#define BOP_GE 15
#define BOP_LAND 16
#define BOP_LOR 17

// reduce.comp
#define ROP_SUM 0
#define ROP_PROD 1
#define ROP_MAX 2
#define ROP_MIN 3

// axis.comp: per-lane passes over the middle axis of [outer, r, inner]
#define AOP_SOFTMAX 0
#define AOP_LOG_SOFTMAX 1
#define AOP_CUMSUM 2
#define AOP_ARGMAX 3
#define AOP_ARGMIN 4

// random.comp
#define RND_UNIFORM 0
#define RND_NORMAL 1
#define RND_TRUNCATED 2

// fft_real.comp
#define FFT_REAL_PACK 0
#define FFT_REAL_CROP 1
#define FFT_REAL_HERMITIAN 2
#define FFT_REAL_REAL 3

#endif
