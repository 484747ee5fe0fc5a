from django.urls import path

from artifacts.nsight.api import NcuKernelList, NcuSummaryView, NsysSummaryView

urlpatterns = [
    path("nsight/systems/<int:pk>/", NsysSummaryView.as_view(), name="api-nsys-summary"),
    path("nsight/compute/<int:pk>/", NcuSummaryView.as_view(), name="api-ncu-summary"),
    path("nsight/compute/<int:pk>/kernels/", NcuKernelList.as_view(), name="api-ncu-kernels"),
]
