"""The benchmark's ROS nodes: the episode player, the evaluator and its scorer, the robot operator."""
