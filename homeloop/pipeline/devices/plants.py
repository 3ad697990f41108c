"""Soil moisture sensors: one in each potted plant, reporting the plant's soil moisture."""

from __future__ import annotations

from homeloop.core.home import Pose
from homeloop.pipeline.devices.context import EquipContext
from homeloop.pipeline.devices.registry import step


@step("plant_sensors", "A soil moisture sensor in each potted plant.")
def plant_sensors(ctx: EquipContext) -> None:
    for obj in ctx.home.objects:
        if obj.semantic_class != "potted_plant":
            continue
        values = {"moisture": obj.soil_moisture} if obj.soil_moisture is not None else None
        ctx.add("soil_moisture_sensor", obj.location.room,
                Pose(x=obj.pose.x, y=obj.pose.y, z=obj.pose.z + obj.size[2] * 0.6, yaw=obj.pose.yaw),
                mounted_on=obj.id, monitors=[obj.id], values=values)
