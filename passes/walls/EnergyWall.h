//===- EnergyWall.h - Wall 18 (part): power draw and energy per token -*- C++
//-*-===//
#ifndef MLSC_PASSES_WALLS_ENERGYWALL_H
#define MLSC_PASSES_WALLS_ENERGYWALL_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

namespace mlsc::walls {

using EnergyPerToken = q::Per<q::Energy, q::Tokens>;

/// Power draw of a system at nameplate: P = devices * TDP + nodes * node
/// overhead. TDP bounds the draw from above; measured draw is lower (e.g.
/// 330 W of 300 W-TDP V100s in Patterson et al. 2021 is the exception).
q::Power systemPower(q::Number Devices, q::Power DeviceTDP, q::Number Nodes,
                     q::Power NodeOverhead);

/// Energy per generated token: E = P / X (Patterson et al., arXiv 2104.10350:
/// energy = power x time).
EnergyPerToken energyPerToken(q::Power Draw, q::TokenRate Throughput);

extern const Formula SystemPowerF, EnergyPerTokenF;

} // namespace mlsc::walls

#endif
