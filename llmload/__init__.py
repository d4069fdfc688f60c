"""llmload."""
