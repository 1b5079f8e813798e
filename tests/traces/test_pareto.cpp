// Pareto fronts of hand-made point sets.
#include <gtest/gtest.h>

#include "traces/pareto.h"

using npusim::traces::pareto_front;

TEST(Pareto, TwoObjectivesByHand) {
  // (latency, energy): (1,5) (2,2) (3,1) are each best somewhere; (3,3) is dominated by (2,2),
  // (4,4) by all three; the repeat of (2,2) is not dominated by its twin (not better anywhere).
  const std::vector<std::vector<double>> pts = {{1, 5}, {2, 2}, {3, 1}, {3, 3}, {4, 4}, {2, 2}};
  EXPECT_EQ(pareto_front(pts), (std::vector<std::size_t>{0, 1, 2, 5}));
}

TEST(Pareto, ThreeObjectivesKeepWhatTwoWouldDrop) {
  // (latency, energy, area): (2,2,1) is dominated in (latency, energy) by (1,1,5) but has the
  // least area, so it stays; (2,2,6) is dominated by (1,1,5).
  const std::vector<std::vector<double>> pts = {{1, 1, 5}, {2, 2, 1}, {2, 2, 6}, {3, 0.5, 5}};
  EXPECT_EQ(pareto_front(pts), (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_TRUE(pareto_front({}).empty());
  EXPECT_EQ(pareto_front({{7, 7, 7}}), (std::vector<std::size_t>{0}));
}
