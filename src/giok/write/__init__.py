"""The write path's judgement: the write policy, the distillation judges and forgetting."""
