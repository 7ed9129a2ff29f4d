// The internals of the direct convolution (conv_direct.cpp, which includes this file once, inside
// its ISA-variant namespace and an anonymous namespace): vector widths and register tiles, the
// flat and phase layouts, the correlation tiles of the forward pass and the input gradient, and
// the weight-gradient tile. Not a header of its own: it needs conv_direct.cpp's includes and
// namespace, and every definition keeps internal linkage (see conv_direct.cpp on weak symbols).
// NOLINTBEGIN(misc-definitions-in-headers)
#pragma once

#if defined(__AVX512F__)
constexpr int VL = 16;     // floats per vector
constexpr int kMaxXV = 6;  // GO * XV accumulators + XV inputs + 1 broadcast <= 32 registers
#elif defined(__AVX__)
constexpr int VL = 8;
constexpr int kMaxXV = 3;  // 16 registers
#else
constexpr int VL = 4;
constexpr int kMaxXV = 3;
#endif
constexpr int GO = 4;  // output channels per correlation tile
#if defined(__AVX512F__)
constexpr int GW = 3;   // output channels per weight-gradient tile (3 x 9 accumulators)
constexpr int GW1 = 2;  // the same for stride 1 (2 x 9: its shifted taps need registers too)
#else
// 16 registers: the weight gradient goes one kernel row at a time, 4 channels x 3 taps (see
// weight_grad_rows).
constexpr int GW = 4;
constexpr int GW1 = 4;
#endif
constexpr int T = 9;  // taps of a 3x3 kernel

typedef float vf __attribute__((vector_size(VL * sizeof(float))));
inline vf vload(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void vstore(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
// x - (+0) is x for every x, -0 included, so this folds to one broadcast (vf{} + x cannot: it
// must turn -0 into +0).
inline vf splat(float x) { return x - vf{}; }
inline float hsum(vf v) {
  float s = 0.0f;
  for (int l = 0; l < VL; ++l) s += v[l];
  return s;
}

// Keeps v in a register: GCC otherwise folds a vector's load into each FMA that uses it, one
// load per FMA, which makes the weight gradient's loops load-bound.
inline void in_register(vf& v) {
#if defined(__AVX512F__)
  asm("" : "+v"(v));
#else
  asm("" : "+x"(v));
#endif
}

std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

// Vectors per tile for Q outputs: the most among those with the least work, counting a vector
// of a 1-vector tile twice (its GO accumulators are too few to hide the FMA latency).
int tile_vectors(std::size_t Q) {
  const std::size_t qv = (Q + VL - 1) / VL;
  const auto work = [&](int x) { return round_up(qv, x) * (x == 1 ? 2 : 1); };
  int xv = 1;
  for (int x = 2; x <= kMaxXV; ++x)
    if (work(x) <= work(xv)) xv = x;
  return xv;
}

// The calling thread's scratch (slot 0..4): conv_direct_scratch in isa.cpp,
// shared by the variants (and compiled once, with the baseline flags).
float* scratch(int slot, std::size_t n) { return conv_direct_scratch(slot, n); }

// ---- layouts ----

// The image side of a convolution in the flat layout: S*S phase planes per channel.
struct InputLayout {
  int S, H, W, OH, OW;
  int L;              // floats per row of a phase plane
  int rows;           // rows of a phase plane
  std::size_t Q;      // OH * L: flat output indices (incl. thrown-away columns)
  int xv;             // vectors per correlation tile
  std::size_t Qr;     // Q rounded up to whole tiles
  std::size_t phase;  // floats per phase plane: all of Qr's windows stay inside and read zeros
  std::size_t chan;   // floats per channel (S*S phases)
  InputLayout(const Conv2dShape& s)
      : S(s.stride),
        H(s.H),
        W(s.W),
        OH(s.out_h()),
        OW(s.out_w()),
        L(S == 1 ? W + 2 : (W + 3) / 2),
        rows(S == 1 ? H + 2 : (H + 3) / 2),
        Q(std::size_t(OH) * L),
        xv(tile_vectors(Q)),
        Qr(round_up(Q, std::size_t(xv) * VL)) {
    // Largest shift; stride 1 adds a vector, which weight_grad_item loads (and does not use)
    // past its last window.
    const std::size_t reach = S == 1 ? 2 * std::size_t(L) + 2 + VL : std::size_t(L) + 1;
    phase = round_up(std::max(Qr + reach, std::size_t(rows) * L), VL);
    chan = std::size_t(S) * S * phase;
  }
};

// dst: C planes of `plane` floats, rows of `ld` floats; src [C, h, w] placed at row `top`,
// column `left`; every other float of the plane zero.
void to_flat(float* dst, const float* src, int C, int h, int w, int ld, int top, int left, std::size_t plane) {
  for (int c = 0; c < C; ++c) {
    float* p = dst + c * plane;
    const float* s = src + std::size_t(c) * h * w;
    std::fill(p, p + std::size_t(top) * ld + left, 0.0f);
    for (int y = 0; y < h; ++y) {
      float* row = p + std::size_t(y + top) * ld + left;
      const float* srow = s + std::size_t(y) * w;
      // Loops, not std::copy/fill: rows are 8..32 floats and a library call costs more.
#pragma omp simd
      for (int x = 0; x < w; ++x) row[x] = srow[x];
      for (int x = w; x < ld; ++x) row[x] = 0.0f;  // right border, next row's left border
    }
    std::fill(p + std::size_t(h + top) * ld + left, p + plane, 0.0f);
  }
}

// The image [C, H, W] in the input layout of `f` (padded; for stride 2 split into phases).
void to_input_layout(float* dst, const float* src, int C, const InputLayout& f) {
  if (f.S == 1) return to_flat(dst, src, C, f.H, f.W, f.L, 1, 1, f.chan);
  for (int c = 0; c < C; ++c) {
    const float* s = src + std::size_t(c) * f.H * f.W;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) {
        float* p = dst + c * f.chan + (a * 2 + b) * f.phase;
        std::fill(p, p + f.phase, 0.0f);
        for (int r = 0; r < f.rows; ++r) {
          const int y = 2 * r + a - 1;  // image row of padded row 2r + a
          if (y < 0 || y >= f.H) continue;
          for (int k = 0; k < f.L; ++k) {
            const int x = 2 * k + b - 1;
            if (x >= 0 && x < f.W) p[std::size_t(r) * f.L + k] = s[std::size_t(y) * f.W + x];
          }
        }
      }
  }
}

// ---- correlation: the forward pass and the input gradient ----

// Tap sets, known at compile time so the tap loops unroll into constant offsets (a loop over a
// runtime tap list was 15-25% slower): tap k uses kernel weight tap(k) (= 3i + j) and reads
// the input at shift(k, L, phase) from the window's start.
struct Stride1Taps {
  static constexpr int n = 9;
  static int tap(int k) { return k; }
  static std::ptrdiff_t shift(int k, std::ptrdiff_t L, std::ptrdiff_t) { return (k / 3) * L + k % 3; }
};
struct Stride2Taps {  // phase (i%2, j%2), then row i/2 and column j/2 within it
  static constexpr int n = 9;
  static int tap(int k) { return k; }
  static std::ptrdiff_t shift(int k, std::ptrdiff_t L, std::ptrdiff_t phase) {
    const int i = k / 3, j = k % 3;
    return ((i % 2) * 2 + j % 2) * phase + (i / 2) * L + j / 2;
  }
};
// Stride-2 input gradient, phase (A, B): dinp at padded position (2r + A, 2s + B) is the sum over
// taps i = A (mod 2), j = B (mod 2) of w[i][j] * dout[r - i/2][s - j/2], which is
// D[(r + 1 - i/2) * L + s + 1 - j/2] in dout padded with one zero row and column in front (D).
template <int A, int B>
struct DinpPhaseTaps {
  static constexpr int ni = A == 0 ? 2 : 1, nj = B == 0 ? 2 : 1, n = ni * nj;
  static int tap(int k) { return 3 * (A + 2 * (k / nj)) + B + 2 * (k % nj); }
  static std::ptrdiff_t shift(int k, std::ptrdiff_t L, std::ptrdiff_t) {
    const int i = A + 2 * (k / nj), j = B + 2 * (k % nj);
    return (1 - i / 2) * L + (1 - j / 2);
  }
};

// out[g][q] = sum_c sum_k w[c][k][g] * in[c*chan + shift(k) + q] for g < GO, q in [0, Qr):
// GO output planes of Qr floats (row stride out_ld).
template <class Taps, int XV>
void correlate_tile(float* out, std::size_t out_ld, const float* in, std::size_t chan, int Cin, std::ptrdiff_t L,
                    std::ptrdiff_t phase, const float* w, std::size_t Qr) {
  for (std::size_t q0 = 0; q0 < Qr; q0 += XV * VL) {
    vf acc[GO][XV] = {};
    for (int c = 0; c < Cin; ++c) {
      const float* base = in + c * chan + q0;
      const float* wc = w + std::size_t(c) * Taps::n * GO;
#pragma GCC unroll 9
      for (int k = 0; k < Taps::n; ++k) {
        const float* src = base + Taps::shift(k, L, phase);
        vf x[XV];
        for (int v = 0; v < XV; ++v) x[v] = vload(src + v * VL);
        for (int g = 0; g < GO; ++g) {
          const vf wb = splat(wc[k * GO + g]);
          for (int v = 0; v < XV; ++v) acc[g][v] += wb * x[v];
        }
      }
    }
    for (int g = 0; g < GO; ++g)
      for (int v = 0; v < XV; ++v) vstore(out + g * out_ld + q0 + v * VL, acc[g][v]);
  }
}

// correlate_tile with the run-time tile width xv (1 to kMaxXV vectors): one instance per width.
template <class Taps>
void correlate(float* out, std::size_t out_ld, const float* in, std::size_t chan, int Cin, std::ptrdiff_t L,
               std::ptrdiff_t phase, const float* w, std::size_t Qr, int xv) {
  static constexpr decltype(&correlate_tile<Taps, 1>) kTiles[] = {
    &correlate_tile<Taps, 1>,
    &correlate_tile<Taps, 2>,
    &correlate_tile<Taps, 3>,
#if defined(__AVX512F__)
    &correlate_tile<Taps, 4>,
    &correlate_tile<Taps, 5>,
    &correlate_tile<Taps, 6>,
#endif
  };
  static_assert(std::extent_v<decltype(kTiles)> == kMaxXV);
  kTiles[xv - 1](out, out_ld, in, chan, Cin, L, phase, w, Qr);
}

// Weights for a correlation with Cout outputs and Cin inputs, as tiles [Cout/GO][Cin][taps][GO]
// (Cout rounded up to GO with zero weights), written to p. get(o, c, t) is the weight of
// output o, input c for kernel tap t. Returns the floats written.
template <class Taps, class Get>
std::size_t pack_weights(float* p, int Cout, int Cin, Get get) {
  const std::size_t n = std::size_t((Cout + GO - 1) / GO) * Cin * Taps::n * GO;
  std::fill(p, p + n, 0.0f);
  for (int o = 0; o < Cout; ++o)
    for (int c = 0; c < Cin; ++c)
      for (int k = 0; k < Taps::n; ++k)
        p[((std::size_t(o / GO) * Cin + c) * Taps::n + k) * GO + o % GO] = get(o, c, Taps::tap(k));
  return n;
}

// Where a correlation's flat outputs go: flat (r, s) -> image (r*step + r0, s*step + s0) of an
// [h, w] plane, for the r < rows, s < cols that land inside it.
struct Scatter {
  int rows, cols, ld, step, r0, s0, h, w;
};

// dst (+)= src (+ bias) through the scatter.
void scatter_plane(float* dst, const float* src, const Scatter& m, bool accumulate, float bias) {
  for (int r = 0; r < m.rows; ++r) {
    const int y = r * m.step + m.r0;
    if (y < 0 || y >= m.h) continue;
    const float* s = src + std::size_t(r) * m.ld;
    float* d = dst + std::size_t(y) * m.w;
    if (m.step == 1) {  // r0 = s0 = 0 and cols <= w
      if (accumulate) {
#pragma omp simd
        for (int x = 0; x < m.cols; ++x) d[x] += s[x];
      } else {
#pragma omp simd
        for (int x = 0; x < m.cols; ++x) d[x] = s[x] + bias;
      }
      continue;
    }
    for (int k = 0; k < m.cols; ++k) {
      const int x = k * m.step + m.s0;
      if (x < 0 || x >= m.w) continue;
      d[x] = accumulate ? d[x] + s[k] : s[k] + bias;
    }
  }
}

// A correlation over one image's planes: `in` holds Cin channels of `chan` floats (rows of L,
// phase planes of `phase` floats); Qr outputs per plane in tiles of xv vectors.
struct Planes {
  const float* in;
  std::size_t chan;
  int Cin;
  std::ptrdiff_t L, phase;
  std::size_t Qr;
  int xv;
};

// One image: out [Cout, h, w] (+)= the correlation of the planes with the packed weights,
// scattered by m. tile: GO * Qr floats.
template <class Taps>
void correlate_image(float* out, bool accumulate, const float* bias, const Planes& in, int Cout, const float* wpk,
                     const Scatter& m, float* tile) {
  const std::size_t hw = std::size_t(m.h) * m.w;
  for (int o0 = 0; o0 < Cout; o0 += GO) {
    correlate<Taps>(tile, in.Qr, in.in, in.chan, in.Cin, in.L, in.phase,
                    wpk + std::size_t(o0 / GO) * in.Cin * Taps::n * GO, in.Qr, in.xv);
    for (int g = 0; g < GO && o0 + g < Cout; ++g)
      scatter_plane(out + (o0 + g) * hw, tile + g * in.Qr, m, accumulate, bias != nullptr ? bias[o0 + g] : 0.0f);
  }
}

// ---- input gradient, stride 2 ----

// dout with one zero row and column in front (D above), rows of OW + 2 floats.
struct DoutLayout {
  int ld, R;  // row stride; rows of each dinp phase computed (H/2 + 1)
  std::size_t Q, Qr, chan;
  int xv;
  DoutLayout(const Conv2dShape& s)
      : ld(s.out_w() + 2),
        R(s.H / 2 + 1),
        Q(std::size_t(R) * ld),
        Qr(round_up(Q, std::size_t(tile_vectors(Q)) * VL)),
        chan(round_up(std::max(Qr + ld + 1, std::size_t(s.out_h() + 2) * ld), VL)),
        xv(tile_vectors(Q)) {}
};

// ---- weight gradient ----

// The vector at p + K from the vectors at p (lo) and p + VL (hi), without an unaligned load.
template <int K, int... L>
inline vf shifted_lanes(vf lo, vf hi, std::integer_sequence<int, L...>) {
  return __builtin_shufflevector(lo, hi, (K + L)...);  // GCC >= 12 and clang
}
template <int K>
inline vf shifted(vf lo, vf hi) {
#if defined(__AVX512F__)
  // valignd takes K as an immediate; GCC turns the shuffle below into vpermt2ps, whose index
  // vectors cost two of the 32 registers the tile needs.
  // (The masked form with every lane selected: GCC 12 warns about the unmasked form's own
  // undefined source vector.)
  const __m512i l = _mm512_castps_si512((__m512)lo), h = _mm512_castps_si512((__m512)hi);
  return (vf)_mm512_castsi512_ps(_mm512_mask_alignr_epi32(l, __mmask16(0xFFFF), h, l, K));
#else
  return shifted_lanes<K>(lo, hi, std::make_integer_sequence<int, VL>{});
#endif
}

// weight_grad_item for 16-register targets (AVX2): GW x 9 accumulators would not fit, and with
// 2 x 9 (GCC spilling) ResNet-20's 3x3 stride-1 weight gradients ran at 14-17 GFLOP/s on an AMD
// EPYC family 23 core. One kernel row r at a time instead, GW x 3 accumulators fed by three
// unaligned input loads and GW dout loads per vector: 7 loads per 12 FMAs, so the FMAs bound it
// (bench_kernels BM_conv2d_weight_grad). dout and the input are read once per kernel row.
template <class Taps, int GW, class Dz>
void weight_grad_rows(float* dw, int o0, int c, int images, Dz dz, const float* in, const Conv2dShape& s,
                      const InputLayout& f) {
  for (int r = 0; r < 3; ++r) {
    std::ptrdiff_t shift[3];
    for (int j = 0; j < 3; ++j) shift[j] = Taps::shift(3 * r + j, f.L, std::ptrdiff_t(f.phase));
    vf acc[GW][3] = {};
    for (int n = 0; n < images; ++n) {
      const float* d[GW];
      for (int g = 0; g < GW; ++g) d[g] = dz(n, std::min(o0 + g, s.OC - 1));
      const float* x0 = in + (std::size_t(n) * s.C + c) * f.chan;
      for (std::size_t q = 0; q < f.Qr; q += VL) {
        vf x[3];
        for (int j = 0; j < 3; ++j) {
          x[j] = vload(x0 + q + shift[j]);
          in_register(x[j]);
        }
        for (int g = 0; g < GW; ++g) {
          const vf dv = vload(d[g] + q);
          for (int j = 0; j < 3; ++j) acc[g][j] += dv * x[j];
        }
      }
    }
    for (int g = 0; g < GW && o0 + g < s.OC; ++g)
      for (int j = 0; j < 3; ++j) dw[((std::size_t(o0 + g) * s.C) + c) * T + 3 * r + j] += hsum(acc[g][j]);
  }
}

// weight_grad_item for 32-register targets (AVX-512): all nine taps at once, GW x 9 accumulators.
template <class Taps, int GW, class Dz>
void weight_grad_taps(float* dw, int o0, int c, int images, Dz dz, const float* in, const Conv2dShape& s,
                      const InputLayout& f) {
  vf acc[GW][T] = {};
  for (int n = 0; n < images; ++n) {
    const float* d[GW];
    for (int g = 0; g < GW; ++g) d[g] = dz(n, std::min(o0 + g, s.OC - 1));
    const float* x0 = in + (std::size_t(n) * s.C + c) * f.chan;
    for (std::size_t q = 0; q < f.Qr; q += VL) {
      vf dv[GW];
      for (int g = 0; g < GW; ++g) dv[g] = vload(d[g] + q);
      if constexpr (std::is_same_v<Taps, Stride1Taps>) {
        // The three taps of a kernel row read the input at q, q + 1 and q + 2: two loads and two
        // in-register shifts instead of three unaligned loads. ResNet-20's 3x3 stride-1 shapes,
        // batch 32, one Zen 5 core: 110-140 GFLOP/s against 120 for the loop below with
        // in_register and 52-67 without it (kernels/bench_kernels, BM_conv2d_weight_grad). Same
        // products, same order per accumulator: bitwise the loop below's result.
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r) {
          const float* p = x0 + q + r * std::ptrdiff_t(f.L);
          const vf lo = vload(p), hi = vload(p + VL);
          for (int g = 0; g < GW; ++g) acc[g][3 * r] += dv[g] * lo;
          const vf x1 = shifted<1>(lo, hi);
          for (int g = 0; g < GW; ++g) acc[g][3 * r + 1] += dv[g] * x1;
          const vf x2 = shifted<2>(lo, hi);
          for (int g = 0; g < GW; ++g) acc[g][3 * r + 2] += dv[g] * x2;
        }
      } else {
#pragma GCC unroll 9
        for (int t = 0; t < T; ++t) {
          vf x = vload(x0 + q + Taps::shift(t, f.L, std::ptrdiff_t(f.phase)));
          in_register(x);
          for (int g = 0; g < GW; ++g) acc[g][t] += dv[g] * x;
        }
      }
    }
  }
  for (int g = 0; g < GW && o0 + g < s.OC; ++g)
    for (int t = 0; t < T; ++t) dw[((std::size_t(o0 + g) * s.C) + c) * T + t] += hsum(acc[g][t]);
}

// dw[o0+g][c][t] += sum_{n < images} sum_q dz[n][o0+g][q] * in[n][c][q + shift(t)] for g < GW.
// dz(n, o) points at image n's dout plane o in the flat layout (rows of f.L floats, zeros in
// the thrown-away columns and up to f.Qr). The tile that fits the target's registers.
template <class Taps, int GW, class Dz>
void weight_grad_item(float* dw, int o0, int c, int images, Dz dz, const float* in, const Conv2dShape& s,
                      const InputLayout& f) {
  if constexpr (VL < 16)
    weight_grad_rows<Taps, GW>(dw, o0, c, images, dz, in, s, f);
  else
    weight_grad_taps<Taps, GW>(dw, o0, c, images, dz, in, s, f);
}

// NOLINTEND(misc-definitions-in-headers)
