"""Localisation: the robot's pose in its own map from drifting odometry and depth (``map -> odom``)."""
