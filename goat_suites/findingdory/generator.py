"""Procedural FindingDory episodes in the embedded simulator: an experience, instructions about it, a verifier.

This module is the generator's public face; the parts live beside it: ``findingdory_config`` (settings),
``findingdory_experience`` (1), ``findingdory_instructions`` (2) and ``findingdory_judge`` (3).

1. Experience (:func:`collect_experience`): a scripted oracle with privileged access to the navigable grid
   walks the home by discrete actions (FindingDory's: 0.25 m steps, 10 deg turns, head tilted down 30 deg),
   goes to a view point of a small object, faces it, picks it up (it leaves the world), walks to a view point
   of a free spot on another receptacle's top and places it there (it is rendered there from then on). Every
   observation is a frame of the log, with its pose, room, time of day (a clock that runs
   ``seconds_per_action`` per action and longer for picks and places), the objects in view and the
   interaction, as :mod:`goat_suites.findingdory.experience` defines it. Ground truth of the moves is kept beside the
   log.
2. Instructions (:func:`generate_tasks`): for each FindingDory task type a template of
   :mod:`goat_suites.findingdory.tasks` is filled from the ground truth of the experience, and its answer
   (the set of correct objects, receptacles or rooms per goal) computed from it. A task is kept only when every
   goal has an answer that some frame of the log satisfies (FindingDory keeps tasks its oracle can solve).
3. Verification (:class:`TaskJudge`): FindingDory's task verifier (findingdory-habitat ``pddl_domain_fp.yaml``
   ``robot_at_object`` / ``robot_at_receptacle`` / ``robot_in_room``, ``pddl.py::is_robot_at_position``): the
   robot is at an object when it is within 2.0 m geodesic of the object's position snapped to the floor
   (``pddl.py`` l.209-213: movable objects have no view points; l.420-426 ``safe_snap_point``), at a receptacle
   when within 0.1 m of one of its view points (``<=``, l.440), the target covers at least ``min_coverage`` of the
   image and lies within the heading threshold (pi/4 for objects, pi/2 for receptacles); in a room when its base
   is inside the room. The high-level check renders the view from a chosen frame's pose in the world as it is
   after the experience; the relaxed checks drop the coverage (DTG) or the distance (SC) threshold, as
   ``assign_and_validate_high_level_goal`` does.

FindingDory's oracle stands exactly on a receptacle's view point when it places (it teleports there,
``oracle_agent.py`` l.257-262), so its place frames pass the 0.1 m check; ours does the same
(``_Oracle.stand_on``), choosing a point that is a view point of the spot and of the receptacle.
"""

from goat_suites.findingdory.generator_config import (
    FINDINGDORY_ACTIONS,
    FindingDoryGenConfig,
    findingdory_sim_config,
)
from goat_suites.findingdory.instructions import generate_tasks
from goat_suites.findingdory.judge import NO_VERDICT, JudgeConfig, TaskJudge, Verdict
from goat_suites.findingdory.oracle import Experience, MoveRecord, collect_experience

__all__ = ["FINDINGDORY_ACTIONS", "Experience", "FindingDoryGenConfig", "JudgeConfig", "MoveRecord", "NO_VERDICT",
           "TaskJudge", "Verdict", "collect_experience", "findingdory_sim_config", "generate_tasks"]
