"""Explicit input and output shapes of the jobs API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from artifacts.jobs.models import Job, JobMember
from artifacts.jobs.querysets import job_facts


class JobMemberSerializer(serializers.ModelSerializer):
    file = serializers.CharField(source="artifact.original_name", read_only=True)
    kind = serializers.CharField(source="artifact.kind", read_only=True)

    class Meta:
        model = JobMember
        fields = ["artifact", "file", "kind", "reason", "pinned", "hosts", "started_at", "ended_at"]


class JobSerializer(serializers.ModelSerializer):
    evidence = serializers.IntegerField(read_only=True, required=False)

    class Meta:
        model = Job
        fields = ["id", "key", "name", "how", "hosts", "started_at", "ended_at", "evidence"]


class JobDetailSerializer(JobSerializer):
    members = JobMemberSerializer(many=True, read_only=True)
    facts = serializers.SerializerMethodField()

    class Meta(JobSerializer.Meta):
        fields = [*JobSerializer.Meta.fields, "members", "facts"]

    def get_facts(self, job: Job) -> list[dict[str, Any]]:
        """Per fact (and host, for host facts): the values stated and by which artifacts."""
        return [row.as_dict() for row in job_facts(job)]


class JobMemberChangeSerializer(serializers.Serializer):
    artifact = serializers.IntegerField(min_value=1)
    action = serializers.ChoiceField(choices=["add", "remove"], default="add")
