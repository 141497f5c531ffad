"""goat_stretch: the physical Hello Robot Stretch behind goat_nav's discrete-action contract.

``driver`` (ROS-free executor and safety checks), ``standin`` (a stand-in of the stretch_body calls, for tests),
``driver_node`` (the rclpy ExecuteAction server; ``driver_io`` builds its messages), ``nav2_mode`` (Nav2 goal
poses).
"""
