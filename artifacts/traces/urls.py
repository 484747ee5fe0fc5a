from django.urls import path

from artifacts.traces import views

urlpatterns = [
    path("traces/", views.trace_list, name="trace-list"),
    path("traces/<int:pk>/", views.trace_detail, name="trace-detail"),
    path("traces/jobs/", views.job_list, name="trace-job-list"),
    path("traces/job/", views.job_detail, name="trace-job"),
    path("traces/diff/", views.trace_diff, name="trace-diff"),
    path("traces/assign-job/", views.trace_assign_job, name="trace-assign-job"),
]
