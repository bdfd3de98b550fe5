"""passhat: will this agent do this job right every time a customer asks?"""

__version__ = "0.1.0"
