"""The tool-authoring framework. Tool modules import what they need from `tools_app.toolsets`."""
