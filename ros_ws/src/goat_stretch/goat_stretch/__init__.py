"""goat_stretch: the physical Hello Robot Stretch behind goat_nav's discrete-action contract.

``driver`` (ROS-free executor and safety checks), ``standin`` (a stand-in of the stretch_body calls, for tests),
``driver_node`` (the rclpy ExecuteAction server; ``driver_io`` builds its messages). The Nav2 approach of the
controller's continuous mode is ``goat_ros.nav2_mode``.
"""
