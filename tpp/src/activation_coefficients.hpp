// The constants of the activation emitters' exp, tanh and gelu: every architecture's emitter
// (tpp/src/arch/x64/activation_emit.hpp, tpp/src/arch/aarch64/activation_emit.cpp) evaluates the
// same polynomials with the same FMA sequence, so that one table serves them all and their results
// agree bit for bit. How each is used, and how it was fitted, is in docs/tpp_eltwise.md
// ("Accuracy of the transcendentals").
//
// ISA-neutral: plain constants, no emitter or architecture header.
#pragma once

namespace weft::tpp::detail {

// Polynomial coefficients (minimax in relative error, fitted in 40-digit arithmetic; see docs).
namespace act_coef {
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693145751953125f;          // 16 significant bits: n * hi is exact
inline constexpr float kLn2Lo = 1.42860682030941723212e-6f;  // ln 2 - hi
inline constexpr float kExpLo = -104.0f;                     // e^-104 rounds to 0
inline constexpr float kExpHi = 89.0f;                       // e^89 overflows
// e^r = 1 + r + r^2 (c0 + c1 r + ... + c5 r^5), |r| <= ln2/2.
inline constexpr float kExpP[6] = {0.50000000136122287f,   0.16666666529540991f,
                                   0.041666463199017118f,  0.0083333611929147828f,
                                   0.0013933855920830864f, 0.00019857788328133226f};
// tanh(x) = x + x^3 (q0 + q1 s + ... + q4 s^4), s = x^2, |x| < 0.55.
inline constexpr float kTanhSmall = 0.55f;
inline constexpr float kTanhQ[5] = {-0.33333332008517795f, 0.13333113785396744f, -0.053909438065446467f,
                                    0.021309437247273053f, -0.0066103078064510655f};
// Phi(-a) = 1/2 - a (p0 + p1 s + ... + p5 s^5), s = a^2, a < 0.8.
inline constexpr float kGeluSmall = 0.8f;
inline constexpr float kPhiP[6] = {0.39894228038093654f,    -0.066490377782522367f,
                                   0.0099735155376569866f,  -0.0011870515179665525f,
                                   0.00011459470889824848f, -8.253201870443055e-6f};
// Phi(-a) e^(a^2/2) = m0 + m1 w + ... + m8 w^8, w = 1/(a + 3), 0.8 <= a <= 15.
inline constexpr float kGeluShift = 3.0f;
inline constexpr float kGeluClamp = 15.0f;  // |gelu(x)| < 2^-149 below -15: Phi is clamped there
inline constexpr int kGeluScaleLog2 = 64;   // Phi(-a) is carried times 2^64 to stay normal
inline constexpr float kGeluScale = 18446744073709551616.0f;
inline constexpr float kMillsM[9] = {-2.413817912610103e-6f, 0.39909983341278859f, 1.1928677658599339f,
                                     3.2347328341803352f,    7.1390954185977283f,  7.9284227148801668f,
                                     52.281523579987546f,    -255.22986346312307f, 255.13607321043278f};
}  // namespace act_coef

}  // namespace weft::tpp::detail
