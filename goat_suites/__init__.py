"""Benchmarks beside the agent: one package per suite (goat, langmap, findingdory, pasture), what they share
(common) and the ROS nodes that replay and score episodes in the ROS graph (ros). See docs/layout.md."""
