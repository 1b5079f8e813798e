// Parsers of the energy model's units: energies, energies per byte and powers.
#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sim/core/units.h"

using namespace npusim;

TEST(EnergyUnits, EnergiesWithPrefixes) {
  EXPECT_DOUBLE_EQ(parse_energy("0.2 pJ").joules, 0.2e-12);
  EXPECT_DOUBLE_EQ(parse_energy("3fJ").joules, 3e-15);
  EXPECT_DOUBLE_EQ(parse_energy(" 1.5 nJ ").joules, 1.5e-9);
  EXPECT_DOUBLE_EQ(parse_energy("2 J").joules, 2.0);
  EXPECT_THROW(parse_energy("0.2"), InputError);  // a bare number is not an energy
  EXPECT_THROW(parse_energy("0.2 pW"), InputError);
  EXPECT_THROW(parse_energy("-1 pJ"), InputError);
  EXPECT_THROW(parse_energy("1 pJ/B"), InputError);  // per byte is its own parser
}

TEST(EnergyUnits, EnergyPerByte) {
  EXPECT_DOUBLE_EQ(parse_energy_per_byte("64 pJ/B").joules, 64e-12);
  EXPECT_DOUBLE_EQ(parse_energy_per_byte("0.99pJ/B").joules, 0.99e-12);
  EXPECT_THROW(parse_energy_per_byte("64 pJ"), InputError);
  EXPECT_THROW(parse_energy_per_byte("8 pJ/bit"), InputError);
  try {
    parse_energy_per_byte("8 pJ/bit", "cfg.yaml:3 (npu.energy.dram)");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cfg.yaml:3 (npu.energy.dram)"), std::string::npos) << what;
    EXPECT_NE(what.find("pJ/B"), std::string::npos) << what;  // lists the accepted spellings
    EXPECT_NE(what.find("'8 pJ/bit'"), std::string::npos) << what;
  }
}

TEST(EnergyUnits, Powers) {
  EXPECT_DOUBLE_EQ(parse_power("35 mW").watts, 0.035);
  EXPECT_DOUBLE_EQ(parse_power("1.2 W").watts, 1.2);
  EXPECT_DOUBLE_EQ(parse_power("300 uW").watts, 300e-6);
  EXPECT_THROW(parse_power("35"), InputError);
  EXPECT_THROW(parse_power("35 mJ"), InputError);
  EXPECT_THROW(parse_power("-3 W"), InputError);
}
