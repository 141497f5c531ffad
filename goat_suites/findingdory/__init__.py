"""FindingDory: episode and experience files, the experience generator, memory, task selection and the suite run."""
